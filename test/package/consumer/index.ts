// A Pulumi program that uses pulumi-ray-gpu, as a team would: the platform added to an existing stack, and a job put
// on someone else's cluster.
import "./platform";
import "./job";
