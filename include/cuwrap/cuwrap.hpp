// The umbrella header: everything in the core library.
#pragma once

#include "cuwrap/context.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/memory.hpp"
#include "cuwrap/stream.hpp"
