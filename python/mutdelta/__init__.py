"""mutdelta: mutation-test the lines a change adds. The package holds the binary's launcher for
`python -m mutdelta`; the program itself is the `mutdelta` executable installed beside it."""
