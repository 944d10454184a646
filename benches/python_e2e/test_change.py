from unittest import TestCase

from more_itertools.more import clamped_window_sums


class ClampedWindowSumsTests(TestCase):
    def test_sums_of_full_windows(self):
        self.assertEqual(list(clamped_window_sums([1, 2, 3, 4], 2, 0, 100)), [3, 5, 7])

    def test_sums_are_clamped(self):
        self.assertEqual(list(clamped_window_sums([1, 2, 3, 4], 2, 4, 6)), [4, 5, 6])

    def test_short_input_yields_nothing(self):
        self.assertEqual(list(clamped_window_sums([1], 3, 0, 10)), [])

    def test_window_size_must_be_positive(self):
        with self.assertRaises(ValueError):
            list(clamped_window_sums([1, 2], 0, 0, 10))
