# ---- reports: matrix report / matrix compare (sources added to matrix/matrix) ----
