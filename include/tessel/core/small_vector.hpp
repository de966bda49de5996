// A vector of trivially copyable values that keeps up to N of them inline, so
// that shapes and strides of the usual ranks never touch the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace tessel {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(std::size_t count, T value = T{}) {
    resize(count, value);
  }
  SmallVector(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }
  template <class It>
  requires(!std::is_integral_v<It>) SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(std::span<const T> values) {  // NOLINT: implicit by design
    assign(values.begin(), values.end());
  }
  SmallVector(const std::vector<T>& values) {  // NOLINT: implicit by design
    assign(values.begin(), values.end());
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  template <class It>
  void assign(It first, It last) {
    const auto count = static_cast<std::size_t>(std::distance(first, last));
    reserve(count);
    std::copy(first, last, data_);
    size_ = count;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  operator std::span<const T>() const noexcept { return {data_, size_}; }

  void reserve(std::size_t count) {
    if (count <= capacity_) return;
    auto* grown = static_cast<T*>(std::malloc(count * sizeof(T)));
    if (grown == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(grown, data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = grown;
    capacity_ = count;
  }
  void resize(std::size_t count, T value = T{}) {
    reserve(count);
    for (std::size_t i = size_; i < count; ++i) data_[i] = value;
    size_ = count;
  }
  void push_back(T value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  void pop_back() noexcept { --size_; }
  void clear() noexcept { size_ = 0; }
  void insert(std::size_t pos, T value) {
    push_back(value);
    std::rotate(data_ + pos, data_ + size_ - 1, data_ + size_);
  }
  void erase(std::size_t pos) {
    std::copy(data_ + pos + 1, data_ + size_, data_ + pos);
    --size_;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void release() noexcept {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    capacity_ = N;
    size_ = 0;
  }
  void take(SmallVector& other) noexcept {
    if (other.data_ == other.inline_) {
      std::memcpy(inline_, other.inline_, other.size_ * sizeof(T));
      data_ = inline_;
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = N;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  T inline_[N] = {};
  T* data_ = inline_;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace tessel
