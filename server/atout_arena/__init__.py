"""The Atout arena: gRPC game server, storage, ratings, REST API and dashboard."""
