"""What `bufsim collect --no-libs` leaves out, in a module of its own so that building the
command line does not import the collector (strace parsing) on every `bufsim` call."""

#: The program loader's and libraries' reads and pseudo-files. Globs match the whole path; other
#: entries are directory prefixes.
NO_LIBS_PATTERNS = (
    "/lib",
    "/lib64",
    "/usr/lib",
    "/usr/lib64",
    "*.so",
    "*.so.*",
    "/etc/ld.so.cache",
    "/proc",
    "/sys",
    "/dev",
)
