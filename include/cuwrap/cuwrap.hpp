// The umbrella header: everything in the core library but cuwrap/dlpack.hpp (include it where
// you exchange tensors: it brings <complex>, which every other user would pay for).
#pragma once

#include "cuwrap/capture.hpp"
#include "cuwrap/context.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/graph.hpp"
#include "cuwrap/ipc.hpp"
#include "cuwrap/kernel.hpp"
#include "cuwrap/launch.hpp"
#include "cuwrap/launch_config.hpp"
#include "cuwrap/memory.hpp"
#include "cuwrap/module.hpp"
#include "cuwrap/multicast.hpp"
#include "cuwrap/peer.hpp"
#include "cuwrap/software_driver.hpp"
#include "cuwrap/stream.hpp"
#include "cuwrap/stream_waiter.hpp"
#include "cuwrap/tensor_map.hpp"
#include "cuwrap/virtual_memory.hpp"
