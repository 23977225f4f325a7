"""The dry run: a plan walked over declared samples, no block executed."""
