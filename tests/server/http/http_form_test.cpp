// form_value: the dir=NAME field of POST /admin/checkpoint's query or form.
#include "server/http/http_form.h"

#include <boost/test/unit_test.hpp>

using zstore::server::form_value;

BOOST_AUTO_TEST_CASE(a_field_is_found_and_percent_decoded) {
  BOOST_TEST(form_value("dir=daily", "dir").value_or("?") == "daily");
  BOOST_TEST(form_value("x=1&dir=a%2Fb+c&dir=second", "dir").value_or("?") == "a/b c");
  BOOST_TEST(form_value("d%69r=x", "dir").value_or("?") == "x");
  BOOST_TEST(form_value("dir", "dir").value_or("?") == "");
  BOOST_TEST(form_value("dir=", "dir").value_or("?") == "");
}

BOOST_AUTO_TEST_CASE(a_missing_field_is_nullopt_and_bad_escapes_stay) {
  BOOST_TEST(!form_value("", "dir").has_value());
  BOOST_TEST(!form_value("dirx=1&&=2", "dir").has_value());
  BOOST_TEST(form_value("dir=100%", "dir").value_or("?") == "100%");
  BOOST_TEST(form_value("dir=%zz%4", "dir").value_or("?") == "%zz%4");
}
