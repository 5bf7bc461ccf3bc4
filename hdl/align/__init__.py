"""The LoadAlign and StoreAlign units and what they share."""
