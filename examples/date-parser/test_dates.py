import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_parses_year_month_day(self) -> None:
        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))

    def test_ignores_surrounding_spaces(self) -> None:
        self.assertEqual(parse_date(" 1999-12-31 "), (1999, 12, 31))


if __name__ == "__main__":
    unittest.main()
