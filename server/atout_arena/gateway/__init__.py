"""The gRPC game server: bots' streams (servicer, session) and its server (``atout-arena gateway``)."""

from atout import _grpc_engine

# Before anything of the game server imports gRPC, which reads GRPC_EXPERIMENTS once: its iomgr
# engine, measured faster than its default (see atout._grpc_engine; ATOUT_GRPC_ENGINE). Only the
# game server's process needs it: the arena's other parts do not speak gRPC.
_grpc_engine.choose()
