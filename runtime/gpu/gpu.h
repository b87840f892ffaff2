// The WebGPU-shaped layer over Vulkan, in one include.
#pragma once
#include "runtime/gpu/buffer_pool.h"
#include "runtime/gpu/command.h"
#include "runtime/gpu/device.h"
#include "runtime/gpu/instance.h"
#include "runtime/gpu/query.h"
#include "runtime/gpu/queue.h"
