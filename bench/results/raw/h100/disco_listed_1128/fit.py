# The least-squares fit of the disco cost model's rates to call 48's device times
# (outputs.md); run with a Python that has numpy.
import math
import numpy as np
N, F, DRAWS = 100000, 10000, 200
p = [math.log((c + 2) / (c + 1)) / math.log(F) for c in range(F)]
df = sorted([N * (1 - (1 - pc) ** DRAWS) for pc in p], reverse=True)
measured = {'tf32': {10000: 602, 4096: 352.7, 2048: 289, 1024: 246, 768: 248.4, 512: 240.7, 384: 245.9, 256: 254.9,
                     192: 265.8, 128: 280.5, 64: 308.6},
            'fp16': {10000: 368.6, 2048: 229.7, 1024: 223.5, 512: 233.7, 256: 252.1, 128: 277.5},
            'fp32': {10000: 1107, 2048: 431, 1024: 334.6, 512: 300.2, 256: 295.6, 128: 322}}
rows, y = [], []
for k, (precision, times) in enumerate(measured.items()):
    for d, ms in times.items():
        listed = df[d:]
        pitch = (min(d, 9999) + 63) // 64 * 64
        r = [1, 0, 0, 0, sum(listed) * 13 / 1e6, sum(x * x for x in listed) / 2 / 1e9]
        r[1 + k] = pitch
        rows.append(r)
        y.append(ms)
a, y = np.array(rows), np.array(y)
c = np.linalg.lstsq(a, y, rcond=None)[0]
print("F %.1f ms, a column: tf32 %.4f fp16 %.4f fp32 %.4f ms, a million searches %.3f ms, 1e9 terms %.2f ms" % tuple(c))
print("residuals", np.round(a @ c - y, 1))
