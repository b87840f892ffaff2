#version 450
// An empty dispatch: measures the cost of a dispatch (and a barrier) in one command buffer.
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
void main() {
  if (gl_GlobalInvocationID.x == 0xffffffffu) data[0] = 1u;
}
