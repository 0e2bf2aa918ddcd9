COPY Item FROM "datasets/bad-csv/items.csv"
COPY Link FROM "datasets/bad-csv/links.csv"
