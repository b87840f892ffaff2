#version 450
// An empty dispatch: measures the cost of a dispatch (and of a barrier) in one command buffer.
// Its one binding is read-only, so the hazard tracker never puts a barrier between two of them.
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint data[]; };
void main() {}
