# A DBLP-sized labelled edge list (seeded): power-law sources, 4 labels, integer weights.
import random
random.seed(7)
n, m = 315_582, 1_049_866
seen = set()
with open('labelled.csv', 'w') as f:
    f.write('src,dst,label,weight\n')
    while len(seen) < m:
        s = int(n * random.random() ** 2.5)
        d = random.randrange(n)
        if s == d or (s, d) in seen:
            continue
        seen.add((s, d))
        f.write(f'{s},{d},l{random.randrange(4)},{random.randint(1, 9)}\n')
