"""Wiring of one concern each (PKI, encryption, access, control plane, workers), registered as a layer's children."""
