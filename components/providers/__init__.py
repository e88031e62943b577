"""Infrastructure providers behind one contract (contract.py): local, and later gcp and aws."""
