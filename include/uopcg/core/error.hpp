// One error mechanism for the whole library.
//
// Every failure (ill-typed graph, malformed JSON, failing syscall, ...) ends in uopcg::fail(), which
// - in constant evaluation, stops compilation (the diagnostic points at the failing call);
// - with exceptions, throws uopcg::error carrying the message;
// - with -fno-exceptions, passes the message to the configurable handler, which must not return
//   (the default prints to stderr and aborts).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <exception>
#define UOPCG_HAS_EXCEPTIONS 1
#else
#define UOPCG_HAS_EXCEPTIONS 0
#endif

namespace uopcg {

/// The exception every uopcg function throws; what() names the node, rule or call at fault.
class error : public std::exception {
 public:
  explicit error(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string message_;
};

/// Receives the message when exceptions are off (or when set explicitly); must not return.
using error_handler = void (*)(const char* message);

namespace detail {
[[noreturn]] inline void default_error_handler(const char* message) {
  std::fputs("uopcg error: ", stderr);
  std::fputs(message, stderr);
  std::fputc('\n', stderr);
  std::abort();
}
inline error_handler& error_handler_slot() noexcept {
  static error_handler handler = nullptr;
  return handler;
}
// Deliberately not constexpr: reaching it during constant evaluation makes the expression
// non-constant, and compilers name this function in the diagnostic.
[[noreturn]] inline void uopcg_error_during_constant_evaluation(const char* message) {
  default_error_handler(message);
}
}  // namespace detail

/// Installs a handler that receives every error message. With exceptions enabled and no handler
/// set, errors are thrown as uopcg::error. A handler that returns is followed by std::abort().
inline error_handler set_error_handler(error_handler h) noexcept {
  error_handler old = detail::error_handler_slot();
  detail::error_handler_slot() = h;
  return old;
}

/// Reports an error. Never returns.
[[noreturn]] inline void fail_runtime(std::string message) {
  if (error_handler h = detail::error_handler_slot()) {
    h(message.c_str());
    std::abort();
  }
#if UOPCG_HAS_EXCEPTIONS
  throw error(std::move(message));
#else
  detail::default_error_handler(message.c_str());
#endif
}

/// Reports an error from code that may run in constant evaluation; there it stops compilation
/// and the diagnostic shows the message. (A template so that compilers do not reject a constexpr
/// function that can never be a constant expression.)
template <class = void>
[[noreturn]] constexpr void fail(std::string_view message) {
  if (std::is_constant_evaluated()) detail::uopcg_error_during_constant_evaluation(message.data());
  fail_runtime(std::string(message));
}

}  // namespace uopcg
