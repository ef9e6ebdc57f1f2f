#!/bin/bash
mpiexec -n 2 python -m mpi_examples.allreduce --size 1024
