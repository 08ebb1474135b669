"""The Agent Client Protocol server: editors drive ProtoAgent sessions over stdio."""
