// The one place that picks the expected<T, E> implementation for the whole project.
// The design names tl::expected; C++23 std::expected has the same interface, so a switch is one line.
#pragma once

#include <expected>

namespace pypto {

// Using-declarations rather than alias templates: `pypto::unexpected(error)` deduces its argument
// through a using-declaration on every compiler, while deduction through an alias template (C++20)
// is missing from clang before 19, which builds the sanitizer and fuzz targets (./dev sanitize).
using std::expected;
using std::unexpected;

}  // namespace pypto
