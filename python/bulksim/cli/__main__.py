"""``python -m bulksim.cli``: the ``bulksim`` command."""

from bulksim.cli import main

main()
