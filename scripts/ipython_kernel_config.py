# Installed by `make venv` into .venv/etc/ipython/ (a config directory every IPython kernel of this venv reads).
# The kernels that execute the chapters (jupyter-book, nbmake) are started by jupyter_client over TCP on 127.0.0.1,
# authenticated by a per-kernel HMAC key; ipykernel ≥ 7 then logs "Kernel is running over TCP without
# encryption" once per chapter, which is noise for a local build. Drop that one message and nothing else.
import logging


class _DropTcpNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "without encryption" not in record.getMessage()


logging.getLogger("IPKernelApp").addFilter(_DropTcpNotice())
