// tessel._tessel._linalg: the matrix decompositions of the C++ API
// (tessel::linalg), each returning a tuple of tensors; python/tessel/
// linalg.py names the tuples and adds the rest of the array API's linalg
// extension. LAPACK runs with the GIL released.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"

namespace tessel::python {

namespace {

template <class Body>
auto unlocked(Body&& body) {
  return without_gil_if(true, std::forward<Body>(body));
}

}  // namespace

void bind_linalg_decompositions(nb::module_& parent) {
  nb::module_ m = parent.def_submodule(
      "_linalg", "Matrix decompositions (LAPACK), as tuples of tensors.");
  m.def(
      "cholesky",
      [](nb::handle x, bool upper) {
        const Tensor a = to_tensor(x);
        return unlocked([&] { return linalg::cholesky(a, upper); });
      },
      nb::arg("x"), nb::kw_only(), nb::arg("upper") = false,
      "L with x = L @ L.mT (lower), or U = L.mT when upper; E2401 when x "
      "is not positive definite.");
  m.def(
      "qr",
      [](nb::handle x, const std::string& mode) {
        const Tensor a = to_tensor(x);
        const linalg::QR r = unlocked([&] { return linalg::qr(a, mode); });
        return nb::make_tuple(r.q, r.r);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("mode") = "reduced",
      "(Q, R) with x = Q @ R ('reduced' or 'complete').");
  m.def(
      "eigh",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        const linalg::Eigh r = unlocked([&] { return linalg::eigh(a); });
        return nb::make_tuple(r.values, r.vectors);
      },
      nb::arg("x"),
      "(eigenvalues ascending, eigenvectors as columns) of symmetric "
      "matrices, from their lower triangle.");
  m.def(
      "eigvalsh",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        return unlocked([&] { return linalg::eigvalsh(a); });
      },
      nb::arg("x"), "The eigenvalues (ascending) of symmetric matrices.");
  m.def(
      "svd",
      [](nb::handle x, bool full_matrices) {
        const Tensor a = to_tensor(x);
        const linalg::SVD r =
            unlocked([&] { return linalg::svd(a, full_matrices); });
        return nb::make_tuple(r.u, r.s, r.vh);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("full_matrices") = true,
      "(U, S, Vh) with x = U @ diag(S) @ Vh, S descending.");
  m.def(
      "svdvals",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        return unlocked([&] { return linalg::svdvals(a); });
      },
      nb::arg("x"), "The singular values, descending.");
  m.def(
      "solve",
      [](nb::handle x1, nb::handle x2) {
        const Tensor a = to_tensor(x1), b = to_tensor(x2);
        return unlocked([&] { return linalg::solve(a, b); });
      },
      nb::arg("x1"), nb::arg("x2"),
      "x with x1 @ x = x2 (x2 a matrix, or a vector when 1-D); E2401 for a "
      "singular x1.");
  m.def(
      "inv",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        return unlocked([&] { return linalg::inv(a); });
      },
      nb::arg("x"), "The inverse; E2401 for a singular matrix.");
  m.def(
      "slogdet",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        const linalg::Slogdet r = unlocked([&] { return linalg::slogdet(a); });
        return nb::make_tuple(r.sign, r.logabsdet);
      },
      nb::arg("x"), "(sign, log|det|); (0, -inf) for a singular matrix.");
  m.def(
      "det",
      [](nb::handle x) {
        const Tensor a = to_tensor(x);
        return unlocked([&] { return linalg::det(a); });
      },
      nb::arg("x"), "The determinant (sign * exp(log|det|), as NumPy).");
}

}  // namespace tessel::python
