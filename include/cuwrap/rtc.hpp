// Run-time compilation and linking (target cuwrap::rtc): NVRTC programs and the nvJitLink
// linker. Not part of cuwrap.hpp: only code that links cuwrap::rtc includes this.
#pragma once

#include "cuwrap/rtc/error.hpp"
#include "cuwrap/rtc/linker.hpp"
#include "cuwrap/rtc/program.hpp"
