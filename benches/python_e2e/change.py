

def clamped_window_sums(iterable, n, low, high):
    """Yield the sum of each full window of *n* items, clamped to [*low*, *high*].

    >>> list(clamped_window_sums([1, 2, 3, 4], 2, 0, 6))
    [3, 5, 6]
    """
    if n < 1:
        raise ValueError('n must be at least 1')
    if low > high:
        raise ValueError('low must not exceed high')
    window = deque(maxlen=n)
    total = 0
    for item in iterable:
        if len(window) == n:
            total -= window[0]
        window.append(item)
        total += item
        if len(window) == n:
            yield min(max(total, low), high)
