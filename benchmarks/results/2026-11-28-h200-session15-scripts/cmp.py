# Worst and median row rel L2 and top-1 agreement of two [rows, vocab] f32 .npy files.
import sys
import numpy as np
a, r = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
e = np.linalg.norm(a - r, axis=1) / np.linalg.norm(r, axis=1)
top = int((a.argmax(1) == r.argmax(1)).sum())
print(f"{sys.argv[1]} vs {sys.argv[2]}: rows {len(r)}, worst rel L2 {e.max():.2e}, median {np.median(e):.2e}, "
      f"nan rows {int(np.isnan(e).sum())}, top-1 {top}/{len(r)}")
