#!/usr/bin/env bash
# Tests tools/check-sizes itself on made-up sources: it flags a file over
# 400 lines and a function over 60 (each one line over), not one at the
# limit, and its brace matching is not fooled by braces in comments, strings,
# raw strings or constructors' member initializers; lambdas count as part of
# their function, tables and enums are not functions.
#   usage: check_sizes_test.sh ROOT
set -uo pipefail
check="$1/tools/check-sizes"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
status=0

lines() {  # lines N: N lines of statements
  local i
  for ((i = 0; i < $1; i++)); do echo "  x += $i;"; done
}

# function NAME BODY_LINES: a definition of BODY_LINES + 2 lines.
function_of() { echo "void $1() {"; lines "$2"; echo "}"; }

expect() {  # expect NAME WANT_RC PATTERN FILE...: PATTERN "" means no finding
  local name=$1 want=$2 pattern=$3 out rc
  shift 3
  out=$("$check" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || { [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; }; then
    echo "FAILED: $name: exit $rc (want $want), output lacks '$pattern':"
    echo "$out"
    status=1
  else
    echo "ok: $name"
  fi
}

lines 400 > at_limit.cc
expect "a 400-line file passes" 0 "check-sizes: OK" at_limit.cc
lines 401 > over.cc
expect "a 401-line file is listed" 1 "^over.cc: file has 401 lines \(max 400\)$" over.cc

function_of f 58 > f60.cc
expect "a 60-line function passes" 0 "check-sizes: OK" f60.cc
{ echo "namespace zstore {"; echo; function_of too_long 59; echo "}"; } > f61.cc
expect "a 61-line function is listed with its first line" 1 \
  "^f61.cc:3: function too_long has 61 lines \(max 60\)$" f61.cc

# Braces in comments and literals do not end the function early.
{
  echo "int Store::g(int x) const {"
  echo '  // }'
  echo '  /* } } */'
  echo '  const char* s = "}}";'
  echo "  char c = '}';"
  echo '  auto r = R"x(} " })x";'
  lines 54
  echo "  return x;"
  echo "}"
} > literals.cc
expect "braces in comments and literals are not matched" 1 \
  "^literals.cc:1: function Store::g has 62 lines" literals.cc

# A lambda inside a function is part of it.
{
  echo "void outer() {"
  echo "  auto each = [&](int i) {"
  lines 30
  echo "  };"
  lines 28
  echo "}"
} > lambda.cc
expect "a lambda counts as part of its function" 1 "^lambda.cc:1: function outer has 62 lines" lambda.cc

# Member initializers in braces are part of the constructor's head.
{
  echo "Reactor::Reactor(int n)"
  echo "    : a_{n},"
  echo "      b_{1, 2},"
  echo "      c_(3) {"
  lines 57
  echo "}"
} > ctor.cc
expect "a constructor runs from its name to its closing brace" 1 \
  "^ctor.cc:1: function Reactor::Reactor has 62 lines" ctor.cc

# Inline member functions in a class, after an access specifier.
{
  echo "class Pump {"
  echo " public:"
  echo "  int step() {"
  lines 59
  echo "  }"
  echo "};"
} > header.h
expect "an inline member function is listed" 1 "^header.h:3: function step has 61 lines" header.h

# Data is not a function: a long table, an enum, a long class body.
{
  echo "const Row kRows[] = {"
  for ((i = 0; i < 70; i++)); do echo "  {\"name$i\", f($i)},"; done
  echo "};"
  echo "enum class Kind {"
  for ((i = 0; i < 70; i++)); do echo "  kKind$i,"; done
  echo "};"
  echo "struct Big {"
  for ((i = 0; i < 70; i++)); do echo "  int field$i = $i;"; done
  echo "};"
} > data.cc
expect "tables, enums and class bodies are not functions" 0 "check-sizes: OK" data.cc

# Without FILEs it checks the source folders of --root, not tests/.
mkdir -p tree/storage/db tree/tests/storage
lines 401 > tree/storage/db/big.cc
lines 401 > tree/tests/storage/big_test.cpp
expect "the tree's source folders are checked, tests/ is not" 1 "^storage/db/big.cc: file has" --root tree
out=$("$check" --root tree 2>&1)
if grep -q big_test <<<"$out"; then
  echo "FAILED: tests/ was checked:"
  echo "$out"
  status=1
fi

exit $status
