"""The program solutions ``mutexlab run PROBLEM --node CMD`` runs, one module per problem
(``ALGORITHM=mutexlab.director.solutions.bees`` in a compose service): see ../solution.py."""
