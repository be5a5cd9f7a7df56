"""The Atout arena: gRPC game server, storage, ratings, REST API and dashboard."""

from atout import _grpc_engine

# Before anything of the arena imports gRPC, which reads GRPC_EXPERIMENTS once: its iomgr
# engine, measured faster than its default (see atout._grpc_engine; ATOUT_GRPC_ENGINE).
_grpc_engine.choose()
