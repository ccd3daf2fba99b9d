# compare_lists.py A B: two 'word rank neighbour score' lists of the same job: lines whose
# neighbour differs, and the largest score difference.
import sys
diff = 0; worst = 0.0; n = 0
with open(sys.argv[1]) as a, open(sys.argv[2]) as b:
    for x, y in zip(a, b):
        x = x.rstrip('\n').split('\t'); y = y.rstrip('\n').split('\t')
        n += 1
        if x[:3] != y[:3]: diff += 1
        worst = max(worst, abs(float(x[3]) - float(y[3])))
print(f"{n} lines, {diff} with another neighbour, largest score difference {worst:.2e}")
