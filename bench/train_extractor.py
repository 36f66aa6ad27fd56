"""Train the learned extractor and write its weights file (memories.capture.classifier_training).

    .venv/bin/python bench/train_extractor.py            # writes memories/capture/data/clause_classifier.npz
    .venv/bin/python bench/train_extractor.py --check    # rebuild; exit 1 unless it matches the shipped file
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from benchenv import ROOT

from memories.capture import classifier_training, learned


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the shipped weights")
    args = parser.parse_args()
    model = classifier_training.build()
    print(json.dumps(model.card, indent=2))
    if args.check:
        shipped = learned.load(learned.MODEL_PATH)
        # Equal to the last digits a BLAS on another machine may change in an embedding.
        same = (shipped.classes == model.classes and shipped.thresholds == model.thresholds
                and np.allclose(shipped.weights, model.weights, atol=1e-3))
        print("the same as the shipped model" if same else "DIFFERS from the shipped model")
        return 0 if same else 1
    learned.save(learned.MODEL_PATH, model)
    print(f"wrote {learned.MODEL_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
