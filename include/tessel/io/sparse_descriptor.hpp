// The format standard's sparse tensors (WIA-AI-011 §2.9) as JSON, their
// indices and values inline:
//   {"format": "COO", "shape": [1000, 1000], "nnz": 3,
//    "indices": {"dtype": "INT32", "data": [[0, 5], [0, 12], [1, 3]]},
//    "values": {"dtype": "FLOAT32", "data": [1.5, 2.3, 0.7]}}
//   {"format": "CSR", "shape": [1000, 1000],
//    "row_pointers": [0, 2, 3, ...], "column_indices": [5, 12, 3],
//    "values": [1.5, 2.3, 0.7]}
// An array is either a plain list (the standard's CSR example: indices
// i64, values f32) or {"dtype", "data"} (its COO example); the writer
// always gives the dtype, so files round-trip exactly. Non-finite values
// are the strings "NaN", "Infinity", "-Infinity" (JSON has no numbers for
// them; Python's json module reads these). docs/sparse.md has the rules.
#pragma once

#include <string>
#include <variant>

#include "tessel/ops/sparse.hpp"

namespace tessel {

// E2201 for complex values (no JSON number holds them).
std::string to_json(const CooTensor& t, int indent = 2);
std::string to_json(const CsrTensor& t, int indent = 2);

using SparseTensor = std::variant<CooTensor, CsrTensor>;

// Untrusted text: E3001 naming the field for malformed JSON, an unknown
// format or dtype, a count that disagrees with nnz or the rank, a number
// that does not fit the dtype, an index outside the shape, row pointers
// that do not start at 0, decrease or end at nnz, or columns of a row
// that do not increase.
SparseTensor sparse_from_json(const std::string& text);

}  // namespace tessel
