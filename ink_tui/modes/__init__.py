"""Front ends that are not the full-screen app: print mode (and later rpc)."""
