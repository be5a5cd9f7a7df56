"""Generated protobuf/gRPC stubs for the Atout wire contract (``proto/atout/v1/atout.proto``).

Do not edit ``atout_pb2*.py``: regenerate them with ``python scripts/gen_proto.py``
(``tests/sdk/test_stubs_fresh.py`` fails when they are stale).
"""
