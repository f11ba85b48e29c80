// main() of the unit lane: plain doctest; these tests need no driver.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
