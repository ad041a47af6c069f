"""The results folder of a batch (SPEC section 8): run files written as runs finish, and the summary."""
