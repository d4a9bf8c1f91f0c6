# ---- runner tests
