// The umbrella header: everything public in tessel.
#pragma once

#include "tessel/core/build_info.hpp"
#include "tessel/core/convert.hpp"
#include "tessel/core/device.hpp"
#include "tessel/core/dtype.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/float_types.hpp"
#include "tessel/core/parallel.hpp"
#include "tessel/core/print.hpp"
#include "tessel/core/random.hpp"
#include "tessel/core/scalar.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/core/storage.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
