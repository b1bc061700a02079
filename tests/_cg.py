"""The conjugate-gradient solver of the cuNumeric talk, as written there for
NumPy: only the import line is dgarray's.  tests/test_matmul.py runs it
against numpy.linalg.solve; benchmarks/run.py times its iterations."""
import dgarray as np


def cg_solve(A, b, tol=1e-10, maxiter=None):
    x = np.zeros(A.shape[1])
    r = b - A.dot(x)
    p = r
    rsold = r.dot(r)
    for i in range(maxiter or b.shape[0]):
        Ap = A.dot(p)
        alpha = rsold / (p.dot(Ap))
        x = x + alpha * p
        r = r - alpha * Ap
        rsnew = r.dot(r)
        if np.sqrt(rsnew) < tol:
            break
        beta = rsnew / rsold
        p = r + beta * p
        rsold = rsnew
    return x
