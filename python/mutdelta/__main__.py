"""`python -m mutdelta ARGS`: runs the mutdelta executable this package was installed with."""

import os
import sys
import sysconfig


def find_binary() -> str:
    """The mutdelta executable of the installation this package belongs to: the scripts
    directory of the interpreter's environment, else of the user scheme (`pip install --user`)."""
    name = "mutdelta" + (sysconfig.get_config_var("EXE") or "")
    places = [sysconfig.get_path("scripts")]
    try:
        user_scheme = sysconfig.get_preferred_scheme("user")
    except AttributeError:  # before Python 3.10
        user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        places.append(sysconfig.get_path("scripts", scheme=user_scheme))
    for place in places:
        path = os.path.join(place, name)
        if os.path.isfile(path):
            return path
    raise SystemExit(
        f"error: the mutdelta executable is not in {' or '.join(places)}: reinstall the package (pip install --force-reinstall mutdelta)"
    )


def main() -> None:
    binary = find_binary()
    if sys.platform == "win32":
        import subprocess

        raise SystemExit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
