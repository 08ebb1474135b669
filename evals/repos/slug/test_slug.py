import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_joins_words_with_hyphens(self) -> None:
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_single_word(self) -> None:
        self.assertEqual(slugify("Python"), "python")


if __name__ == "__main__":
    unittest.main()
