// cuwrap::mpi: MPI with device memory (docs/mpi.md). A library of its own (CMake target
// cuwrap::mpi, built when MPI is found): the core never needs MPI.
#pragma once

#include "cuwrap/mpi/collectives.hpp"
#include "cuwrap/mpi/communicator.hpp"
#include "cuwrap/mpi/datatype.hpp"
#include "cuwrap/mpi/device_selection.hpp"
#include "cuwrap/mpi/error.hpp"
#include "cuwrap/mpi/ipc.hpp"
#include "cuwrap/mpi/point_to_point.hpp"
#include "cuwrap/mpi/topology.hpp"
