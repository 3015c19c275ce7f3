// Why a kernel opt is invalid, as a value: tinygrad raises KernelOptError (codegen/opt/__init__.py,
// check) and its searches catch it to try the next opt. uopcg's core builds without exceptions, so
// an invalid opt is a result instead; the opt and tinygrad's reason travel together, and whoever
// cannot go on calls fail() (value_or_fail).
#pragma once

#include <optional>
#include <utility>

#include "../../core/arg.hpp"
#include "../../core/error.hpp"
#include "../../core/text.hpp"

namespace uopcg::codegen::opt {

/// An opt as tinygrad prints it: Opt(op=OptOps.UPCAST, axis=0, arg=4).
constexpr text to_text(const Opt& o) {
  text t;
  t.append("Opt(op=OptOps.").append(name(o.op)).append(", axis=");
  if (o.axis) t.append(*o.axis);
  else t.append("None");
  t.append(", arg=");
  o.arg.print(t);
  t.append(')');
  return t;
}

/// An invalid opt: which one, and tinygrad's KernelOptError message for it.
struct KernelOptError {
  Opt opt;
  text message;

  /// One line for a user: "invalid Opt(op=OptOps.UPCAST, axis=1, arg=4): upcast is for ...".
  constexpr text describe() const {
    text t;
    t.append("invalid ").append(to_text(opt)).append(": ").append(message);
    return t;
  }
};

/// The outcome of an opt step: a value, or the KernelOptError that stopped it.
template <class T>
class OptResult {
 public:
  constexpr OptResult(T value) : value_(std::move(value)) {}  // NOLINT: a success converts
  constexpr OptResult(KernelOptError e) : error_(std::move(e)) {}  // NOLINT: so does a failure

  constexpr bool ok() const { return !error_.has_value(); }
  constexpr explicit operator bool() const { return ok(); }
  /// The error; only valid when !ok().
  constexpr const KernelOptError& error() const {
    if (!error_) fail("OptResult::error: the opt succeeded");
    return *error_;
  }
  /// The value; an invalid opt is an error (uopcg::error, or the error handler) naming it.
  constexpr const T& value_or_fail() const& {
    if (error_) fail(error_->describe().view());
    return *value_;
  }
  constexpr T value_or_fail() && {
    if (error_) fail(error_->describe().view());
    return std::move(*value_);
  }

 private:
  std::optional<T> value_;
  std::optional<KernelOptError> error_;
};

}  // namespace uopcg::codegen::opt
