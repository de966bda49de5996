#include <tessel/tessel.hpp>

#include <iostream>

int main() {
  // [[0, 1, 2], [3, 4, 5]] transposed: element (2, 1) is 5, read via a view.
  const tessel::Tensor t = tessel::arange(6).reshape({2, 3}).transpose(0, 1);
  std::cout << t << "\n";
  return t.at<std::int64_t>({2, 1}) == 5 ? 0 : 1;
}
