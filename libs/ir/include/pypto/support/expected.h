// The one place that picks the expected<T, E> implementation for the whole project.
// The design names tl::expected; C++23 std::expected has the same interface, so a switch is one line.
#pragma once

#include <expected>

namespace pypto {

template <typename T, typename E>
using expected = std::expected<T, E>;

template <typename E>
using unexpected = std::unexpected<E>;

}  // namespace pypto
