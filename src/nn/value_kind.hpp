// Modules compute with one of two kinds of value: Variable (training: the
// graph records) or Tensor (inference: plain tensors, no graph, no node
// per op). Each forward is written once as a template over that kind; these
// helpers convert the module's parameters and the values it passes along.
#pragma once

#include <type_traits>

#include "tessel/autograd/variable.hpp"

namespace tessel::nn::detail {

template <class T>
constexpr bool kRecords = std::is_same_v<T, Variable>;

// A parameter as the kind T (an undefined one stays undefined).
template <class T>
T use(const Variable& parameter) {
  if constexpr (kRecords<T>) {
    return parameter;
  } else {
    return parameter.defined() ? parameter.value() : Tensor();
  }
}

// The plain tensor under a value of either kind.
inline const Tensor& tensor_of(const Tensor& x) { return x; }
inline Tensor tensor_of(const Variable& x) { return x.value(); }

// A plain tensor (one that needs no gradient) as the kind T.
template <class T>
T as(const Tensor& t) {
  if constexpr (kRecords<T>) {
    return Variable(t);
  } else {
    return t;
  }
}

}  // namespace tessel::nn::detail
