"""One MPI process of a distributed call that ``RunConfig(comm_backend="mpi")`` launched itself
(``pypto/ir/distributed_mpi.py``): ``mpirun -n N python -m pypto.ir.mpi_rank_worker JOB``. Each
process loads the chip builds the job names, runs its rank's dispatches in the MPI job, and rank 0
writes the host tensors (holding every rank's results) or the error back for the launching process."""

import sys


def main(job_path: str) -> int:
    import torch

    from pypto import _core
    from pypto.ir.distributed_compiled_program import (
        DistributedCompiledProgram,
        DistributedConfig,
        DistributedRunError,
    )
    from pypto.ir.distributed_mpi import run_in_job
    from pypto.runtime.compiled import CompiledProgram

    job = torch.load(job_path, weights_only=False)
    loaded = {}  # a build directory is loaded once, however many of this rank's dispatches run it
    programs = []
    for output_dir, parameters, program_json in job["chips"]:
        if output_dir not in loaded:
            artifacts = _core.load_compiled(output_dir, job["platform"], program_json=program_json)
            loaded[output_dir] = CompiledProgram(artifacts, parameters, register=False)
        programs.append(loaded[output_dir])
    program = DistributedCompiledProgram(job["name"], job["platform"], job["output_dir"],
                                         DistributedConfig(device_ids=job["device_ids"]), job["params"], job["plan"],
                                         programs, comm_backend="mpi")
    values = job["values"]
    error = None
    try:
        run_in_job(program, values)
    except DistributedRunError as failure:
        error = (str(failure), failure.rank)
    if _core.mpi_rank() == 0:
        tensors = {name: values[name] for name in job["tensors"]}
        torch.save({"values": tensors, "error": error}, job["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
