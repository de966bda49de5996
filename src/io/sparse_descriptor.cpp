// Sparse tensors as the format standard's JSON (io/sparse_descriptor.hpp).
// Reading validates every number before a tensor is built from it; the
// structural rules (row pointers, sorted columns) are CsrTensor's own.
#include "tessel/io/sparse_descriptor.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "io/base_types.hpp"
#include "tessel/core/error.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

using nlohmann::json;

[[noreturn]] void bad_field(const std::string& field, const std::string& what) {
  throw FormatError(
      ErrorCode::MalformedFile,
      fmt::format("[sparse descriptor] field '{}': {}", field, what));
}

// ---- writing ----

json number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// {"dtype": ..., "data": [...]} of a 1-D tensor.
json array_json(const Tensor& t, const char* what) {
  if (is_complex(t.dtype()) || !is_byte_addressable(t.dtype())) {
    throw_error(ErrorCode::BadDType,
                fmt::format("[to_json] sparse {} of {} have no JSON number "
                            "form",
                            what, dtype_name(t.dtype())));
  }
  json data = json::array();
  const DType d = t.dtype();
  if (is_floating_point(d)) {
    const Tensor h = t.to(DType::F64).contiguous();
    for (std::int64_t i = 0; i < h.numel(); ++i) {
      data.push_back(number(h.flat<double>(i)));
    }
  } else if (d == DType::U64) {
    const Tensor h = t.contiguous();
    for (std::int64_t i = 0; i < h.numel(); ++i) {
      data.push_back(h.flat<std::uint64_t>(i));
    }
  } else {
    const Tensor h = t.to(DType::I64).contiguous();
    for (std::int64_t i = 0; i < h.numel(); ++i) {
      data.push_back(h.flat<std::int64_t>(i));
    }
  }
  return {{"dtype", io::base_type(d)}, {"data", std::move(data)}};
}

json shape_json(const Shape& s) {
  return std::vector<std::int64_t>(s.begin(), s.end());
}

// ---- reading ----

struct Array {
  DType dtype;
  const json* data;
};

// A plain list or {"dtype", "data"}; `fallback` when the list is plain.
Array read_array(const json& doc, const std::string& field, DType fallback) {
  if (!doc.contains(field)) bad_field(field, "missing");
  const json& j = doc[field];
  if (j.is_array()) return {fallback, &j};
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) {
    bad_field(field, "expected a list or {\"dtype\": ..., \"data\": [...]}");
  }
  DType d = fallback;
  if (j.contains("dtype")) {
    if (!j["dtype"].is_string()) bad_field(field + ".dtype", "expected a name");
    d = io::parse_base_type(j["dtype"].get<std::string>(), field + ".dtype");
  }
  return {d, &j["data"]};
}

DType index_dtype(const Array& a, const std::string& field) {
  if (a.dtype != DType::I32 && a.dtype != DType::I64) {
    bad_field(field + ".dtype",
              fmt::format("indices are INT32 or INT64, not {}",
                          io::base_type(a.dtype)));
  }
  return a.dtype;
}

// An index in [0, bound) that fits `dtype`.
std::int64_t read_index(const json& v, DType dtype, std::int64_t bound,
                        const std::string& field) {
  if (!v.is_number_integer()) bad_field(field, "indices must be integers");
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(
                                   std::numeric_limits<std::int64_t>::max())) {
    bad_field(field, "index too large");
  }
  const auto i = v.get<std::int64_t>();
  const std::int64_t top = dtype == DType::I32
                               ? std::numeric_limits<std::int32_t>::max()
                               : std::numeric_limits<std::int64_t>::max();
  if (i > top) {
    bad_field(field,
              fmt::format("index {} does not fit {}", i, io::base_type(dtype)));
  }
  if (i < 0 || (bound >= 0 && i >= bound)) {
    bad_field(field, fmt::format("index {} is outside [0, {})", i, bound));
  }
  return i;
}

double read_float(const json& v, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  bad_field(field,
            "values must be numbers (or \"NaN\", \"Infinity\", "
            "\"-Infinity\")");
}

// The values as a tensor of their dtype, each checked against it.
Tensor read_values(const Array& a, std::int64_t nnz, const std::string& field) {
  if (static_cast<std::int64_t>(a.data->size()) != nnz) {
    bad_field(field,
              fmt::format("{} values for {} entries", a.data->size(), nnz));
  }
  const DType d = a.dtype;
  // Sparse values are numbers (CooTensor's rule): not bool, and complex
  // and packed types have no JSON number.
  if (d == DType::Bool || is_complex(d) || !is_byte_addressable(d)) {
    bad_field(field + ".dtype",
              fmt::format("{} values have no JSON form", io::base_type(d)));
  }
  const json& data = *a.data;
  if (is_floating_point(d)) {
    std::vector<double> out;
    for (const json& v : data) out.push_back(read_float(v, field));
    return from_vector(out, Shape{nnz}).to(d);
  }
  if (d == DType::U64) {
    std::vector<std::uint64_t> out;
    for (const json& v : data) {
      if (!v.is_number_unsigned() &&
          !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
        bad_field(field, "UINT64 values must be non-negative integers");
      }
      out.push_back(v.get<std::uint64_t>());
    }
    return from_vector(out, Shape{nnz});
  }
  // Other integers: read as i64 and range-checked, so the cast is exact.
  const auto [lo, hi] = io::int_range(d);
  std::vector<std::int64_t> out;
  for (const json& v : data) {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      bad_field(field, fmt::format("{} values must be integers of its range",
                                   io::base_type(d)));
    }
    const auto x = v.get<std::int64_t>();
    if (x < lo || x > hi) {
      bad_field(field, fmt::format("{} does not fit {}", x, io::base_type(d)));
    }
    out.push_back(x);
  }
  return from_vector(out, Shape{nnz}).to(d);
}

Shape read_shape(const json& doc) {
  if (!doc.contains("shape") || !doc["shape"].is_array() ||
      static_cast<std::int64_t>(doc["shape"].size()) > kMaxRank) {
    bad_field("shape",
              fmt::format("expected a list of at most {} extents", kMaxRank));
  }
  Shape shape;
  for (const json& e : doc["shape"]) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0 ||
        (e.is_number_unsigned() &&
         e.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      bad_field("shape", "extents are non-negative integers");
    }
    shape.push_back(e.get<std::int64_t>());
  }
  return shape;
}

void check_nnz(const json& doc, std::int64_t nnz) {
  if (!doc.contains("nnz")) return;
  if (!doc["nnz"].is_number_integer() ||
      doc["nnz"].get<std::int64_t>() != nnz) {
    bad_field("nnz", fmt::format("says {} but the data has {} entries",
                                 doc["nnz"].dump(), nnz));
  }
}

CooTensor read_coo(const json& doc) {
  const Shape shape = read_shape(doc);
  if (shape.empty()) bad_field("shape", "a COO tensor has at least one axis");
  const Array indices = read_array(doc, "indices", DType::I64);
  const DType idx = index_dtype(indices, "indices");
  const auto nnz = static_cast<std::int64_t>(indices.data->size());
  check_nnz(doc, nnz);
  const auto rank = static_cast<std::int64_t>(shape.size());
  // [nnz][rank] as the standard writes it ([row, col] pairs); stored
  // [rank, nnz] as CooTensor keeps it.
  std::vector<std::int64_t> flat(static_cast<std::size_t>(rank * nnz));
  for (std::int64_t k = 0; k < nnz; ++k) {
    const json& entry = (*indices.data)[static_cast<std::size_t>(k)];
    if (!entry.is_array() || static_cast<std::int64_t>(entry.size()) != rank) {
      bad_field(
          "indices.data",
          fmt::format("entry {} must list {} indices (one per axis)", k, rank));
    }
    for (std::int64_t d = 0; d < rank; ++d) {
      flat[static_cast<std::size_t>(d * nnz + k)] =
          read_index(entry[static_cast<std::size_t>(d)], idx,
                     shape[static_cast<std::size_t>(d)], "indices.data");
    }
  }
  const Tensor values =
      read_values(read_array(doc, "values", DType::F32), nnz, "values");
  return CooTensor::from_parts(from_vector(flat, Shape{rank, nnz}).to(idx),
                               values, shape);
}

CsrTensor read_csr(const json& doc) {
  const Shape shape = read_shape(doc);
  if (shape.size() != 2) {
    bad_field("shape", fmt::format("a CSR tensor is a matrix, got {} axes",
                                   shape.size()));
  }
  const Array crow = read_array(doc, "row_pointers", DType::I64);
  const Array col = read_array(doc, "column_indices", DType::I64);
  const DType idx = index_dtype(crow, "row_pointers");
  if (index_dtype(col, "column_indices") != idx) {
    bad_field("column_indices.dtype", "must be the row pointers' dtype");
  }
  if (static_cast<std::int64_t>(crow.data->size()) != shape[0] + 1) {
    bad_field("row_pointers", fmt::format("{} pointers for {} rows",
                                          crow.data->size(), shape[0]));
  }
  const auto nnz = static_cast<std::int64_t>(col.data->size());
  check_nnz(doc, nnz);
  std::vector<std::int64_t> pointers, columns;
  for (const json& v : *crow.data) {
    pointers.push_back(read_index(v, idx, nnz + 1, "row_pointers"));
  }
  for (const json& v : *col.data) {
    columns.push_back(read_index(v, idx, shape[1], "column_indices"));
  }
  const Tensor values =
      read_values(read_array(doc, "values", DType::F32), nnz, "values");
  // from_parts checks the structure (E3001): starts at 0, never
  // decreases, ends at nnz, columns increase within a row.
  return CsrTensor::from_parts(from_vector(pointers).to(idx),
                               from_vector(columns).to(idx), values, shape);
}

}  // namespace

std::string to_json(const CooTensor& t, int indent) {
  // Entries as [index per axis] lists, the standard's form.
  const Tensor indices = t.indices().to(DType::I64).contiguous();
  const std::int64_t nnz = t.nnz();
  json entries = json::array();
  for (std::int64_t k = 0; k < nnz; ++k) {
    json entry = json::array();
    for (std::int64_t d = 0; d < t.rank(); ++d) {
      entry.push_back(indices.flat<std::int64_t>(d * nnz + k));
    }
    entries.push_back(std::move(entry));
  }
  const json doc = {{"format", "COO"},
                    {"shape", shape_json(t.shape())},
                    {"nnz", nnz},
                    {"indices",
                     {{"dtype", io::base_type(t.index_dtype())},
                      {"data", std::move(entries)}}},
                    {"values", array_json(t.values(), "values")}};
  return doc.dump(indent);
}

std::string to_json(const CsrTensor& t, int indent) {
  const json doc = {
      {"format", "CSR"},
      {"shape", shape_json(t.shape())},
      {"nnz", t.nnz()},
      {"row_pointers", array_json(t.crow_indices(), "row pointers")},
      {"column_indices", array_json(t.col_indices(), "columns")},
      {"values", array_json(t.values(), "values")}};
  return doc.dump(indent);
}

SparseTensor sparse_from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    bad_field("(document)", fmt::format("not JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("format") ||
      !doc["format"].is_string()) {
    bad_field("format", "expected \"COO\" or \"CSR\"");
  }
  const std::string format = io::upper(doc["format"].get<std::string>());
  if (format == "COO") return read_coo(doc);
  if (format == "CSR") return read_csr(doc);
  bad_field("format", fmt::format("'{}' is not COO or CSR",
                                  doc["format"].get<std::string>()));
}

}  // namespace tessel
