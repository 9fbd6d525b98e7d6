#!/usr/bin/env python3
"""datasets.py NAME --out FILE.h5 [--seed S] [--test-fraction F] - real
data sets that no one here made, from what Debian ships
(python3-sklearn's bundled files, read by sklearn.datasets), as hpc-train's
/X,/Y files:

  digits    8x8 images of handwritten digits (UCI), 1,797 samples, 64
            pixel inputs 0-16, 10 classes: /Y class labels (train-labels)
  diabetes  442 patients, 10 baseline variables, a disease progression
            measure one year later: /Y [N, 1] (train-xy)

The samples are shuffled by a seeded permutation (numpy's default_rng(S),
S = 0 by default) and the last F of them (0.2) are the test split: the
rows hpc-train --val-fraction F validates on (the attribute val_fraction
says F).  peers.py trains scikit-learn and PyTorch on the same split.
Nothing is downloaded and nothing large is committed: the data come from
the installed package, converted at test time.
"""
import argparse
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
# installed: PREFIX/share/hpckit/data -> ../python; the source tree: data/
sys.path[:0] = [os.path.join(here, "..", "python"), here]
import hpckit_data as hd  # noqa: E402

SETS = {"digits": ("load_digits", True), "diabetes": ("load_diabetes", False)}


def load(name, seed=0):
    """(X, y, labels, description) in the seeded order"""
    try:
        import sklearn.datasets as sd
    except ImportError:
        raise hd.DataError(f"{name}: needs scikit-learn's bundled data (Debian: python3-sklearn)") from None
    fn, labels = SETS[name]
    b = getattr(sd, fn)()
    order = np.random.default_rng(seed).permutation(len(b.target))
    return b.data[order], b.target[order], labels, b


def main():
    p = argparse.ArgumentParser(prog="datasets.py", description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=sorted(SETS))
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0, help="the shuffle's seed (default 0)")
    p.add_argument("--test-fraction", type=float, default=0.2, help="the last F of the samples test (default 0.2)")
    a = p.parse_args()
    try:
        x, y, labels, b = load(a.name, a.seed)
        attrs = {"source": f"scikit-learn {a.name} (sklearn.datasets.{SETS[a.name][0]}), shuffled with seed {a.seed}",
                 "val_fraction": a.test_fraction, "x_names": ",".join(map(str, b.feature_names)),
                 "seed": a.seed}
        if labels:
            attrs["class_names"] = ",".join(map(str, b.target_names))
        hd.write_arrays(a.out, x, y if labels else y.reshape(-1, 1), labels=labels,
                        classes=len(b.target_names) if labels else 0, attrs=attrs, name=a.name)
    except hd.DataError as e:
        print(f"datasets.py: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
