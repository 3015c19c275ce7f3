// The sources of a pattern node, the alternatives of any_of and the rules of a rule set: a Boost.Hana
// sequence (hana::unpack, hana::at_c, hana::size and the rest of Iterable/Foldable work on it) stored
// as a plain aggregate of up to four members, or with a base per element beyond that. Not
// hana::basic_tuple: every pattern node with sources builds one, so its cost is paid per rule, and an
// aggregate is initialized, and its elements reached, without instantiating a function (basic_tuple's
// constructor templates, EBO bases and per-element ebo_get are instantiated per rule).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/drop_front.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/is_empty.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/unpack.hpp>

namespace uopcg::pat {

namespace hana = boost::hana;

namespace detail {
struct pack_tag {};

// Element I of a pack of five or more: a base of its own, reached by a built-in conversion (no
// function per element, where hana::basic_tuple has an ebo_get per element).
template <std::size_t I, class T>
struct pack_slot {
  [[no_unique_address]] T v;
};
template <std::size_t I, class T>
constexpr const T& slot_value(const pack_slot<I, T>& s) {
  return s.v;
}
template <class Is, class... P>
struct pack_slots;
template <std::size_t... I, class... P>
struct pack_slots<std::index_sequence<I...>, P...> : pack_slot<I, P>... {
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f(static_cast<const pack_slot<I, P>&>(*this).v...);
  }
};

// apply(f) calls f with the elements; get<I>() is element I. An aggregate (make_pack builds one), and
// its size an enumerator: g++ mangles the name of every constructor and static data member a class
// instantiates, used or not, and a rule set's pack has a name that spells every rule.
template <class... P>
struct pack : pack_slots<std::index_sequence_for<P...>, P...> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = sizeof...(P) };
  template <std::size_t I>
  constexpr const auto& get() const {
    return slot_value<I>(*this);
  }
};
template <>
struct pack<> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = 0 };
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f();
  }
};
template <class A>
struct pack<A> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = 1 };
  [[no_unique_address]] A a0;
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f(a0);
  }
  template <std::size_t I>
  constexpr const auto& get() const {
    return a0;
  }
};
template <class A, class B>
struct pack<A, B> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = 2 };
  [[no_unique_address]] A a0;
  [[no_unique_address]] B a1;
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f(a0, a1);
  }
  template <std::size_t I>
  constexpr const auto& get() const {
    if constexpr (I == 0) return a0;
    else return a1;
  }
};
template <class A, class B, class C>
struct pack<A, B, C> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = 3 };
  [[no_unique_address]] A a0;
  [[no_unique_address]] B a1;
  [[no_unique_address]] C a2;
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f(a0, a1, a2);
  }
  template <std::size_t I>
  constexpr const auto& get() const {
    if constexpr (I == 0) return a0;
    else if constexpr (I == 1) return a1;
    else return a2;
  }
};
template <class A, class B, class C, class D>
struct pack<A, B, C, D> {
  using hana_tag = pack_tag;
  enum : std::size_t { size = 4 };
  [[no_unique_address]] A a0;
  [[no_unique_address]] B a1;
  [[no_unique_address]] C a2;
  [[no_unique_address]] D a3;
  template <class F>
  constexpr decltype(auto) apply(F&& f) const {
    return f(a0, a1, a2, a3);
  }
  template <std::size_t I>
  constexpr const auto& get() const {
    if constexpr (I == 0) return a0;
    else if constexpr (I == 1) return a1;
    else if constexpr (I == 2) return a2;
    else return a3;
  }
};

/// A pack of p...: braces for the form the pack's size selects.
template <class... P>
constexpr pack<P...> make_pack(const P&... p) {
  if constexpr (sizeof...(P) > 4) return {{{p}...}};
  else return {p...};
}

/// The elements of a, then those of b (rule_set's `+`): an aggregate initialized from the elements,
/// reached by built-in conversions, so no function is instantiated per element or per lambda.
template <class... A, class... B, std::size_t... I, std::size_t... J>
constexpr pack<A..., B...> join(const pack<A...>& a, const pack<B...>& b, std::index_sequence<I...>, std::index_sequence<J...>) {
  if constexpr (sizeof...(A) > 4 && sizeof...(B) > 4) {
    return {{{static_cast<const pack_slot<I, A>&>(a).v}..., {static_cast<const pack_slot<J, B>&>(b).v}...}};
  } else if constexpr (sizeof...(A) > 4) {
    return {{{static_cast<const pack_slot<I, A>&>(a).v}..., {b.template get<J>()}...}};
  } else if constexpr (sizeof...(B) > 4) {
    return {{{a.template get<I>()}..., {static_cast<const pack_slot<J, B>&>(b).v}...}};
  } else {
    return make_pack(a.template get<I>()..., b.template get<J>()...);
  }
}
}  // namespace detail

}  // namespace uopcg::pat

// --- pack as a Hana sequence (Foldable through unpack, Iterable through at/drop_front/is_empty) --------
namespace boost::hana {
template <>
struct unpack_impl<uopcg::pat::detail::pack_tag> {
  template <class Xs, class F>
  static constexpr decltype(auto) apply(Xs&& xs, F&& f) {
    return xs.apply(static_cast<F&&>(f));
  }
};
template <>
struct length_impl<uopcg::pat::detail::pack_tag> {
  template <class Xs>
  static constexpr auto apply(const Xs&) {
    return hana::size_c<Xs::size>;
  }
};
template <>
struct at_impl<uopcg::pat::detail::pack_tag> {
  template <class Xs, class N>
  static constexpr decltype(auto) apply(Xs&& xs, const N&) {
    return xs.template get<N::value>();
  }
};
template <>
struct is_empty_impl<uopcg::pat::detail::pack_tag> {
  template <class Xs>
  static constexpr auto apply(const Xs&) {
    return hana::bool_c<Xs::size == 0>;
  }
};
// the elements from N on, as a hana::basic_tuple (for Hana's generic algorithms; uopcg does not use it)
template <>
struct drop_front_impl<uopcg::pat::detail::pack_tag> {
  template <class Xs, class N>
  static constexpr auto apply(Xs&& xs, const N& n) {
    return hana::drop_front(xs.apply([](const auto&... e) { return hana::make_basic_tuple(e...); }), n);
  }
};
}  // namespace boost::hana
