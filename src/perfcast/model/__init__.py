"""Stages 2-3: align generations, build the training set, train and evaluate the KNN model."""
